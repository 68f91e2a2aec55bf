# Alternative 'per-pair-sklearn' for emojicrypt-mean-cosine-similarity: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: Tabular.py::compute_mean_cosine_similarity
    # Per pair: embed the original value and the decrypted value (one call
    # each, exactly as they stand) and add their cosine similarity, computed
    # with sklearn's cosine_similarity, to a running total. The total is the
    # *sum* of similarities; the caller divides it by len(enc_dec_pairs).
    separator = ', Value: '
    overall_similarity_score = 0
    for original_level, decrypted_level in enc_dec_pairs.items():
        original_value = original_level.split(separator, 1)[1]
        decrypted_value = decrypted_level.split(separator, 1)[1]

        original_response = client.embeddings.create(
            input=original_value, model="text-embedding-3-small", dimensions=100)
        decrypted_response = client.embeddings.create(
            input=decrypted_value, model="text-embedding-3-small", dimensions=100)

        original_embedding = np.array(original_response.data[0].embedding, dtype=float).reshape(1, -1)
        decrypted_embedding = np.array(decrypted_response.data[0].embedding, dtype=float).reshape(1, -1)

        overall_similarity_score += cosine_similarity(original_embedding, decrypted_embedding)

    return overall_similarity_score

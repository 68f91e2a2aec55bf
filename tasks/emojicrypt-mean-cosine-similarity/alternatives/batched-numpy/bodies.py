# Alternative 'batched-numpy' for emojicrypt-mean-cosine-similarity: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: Tabular.py::compute_mean_cosine_similarity
    # Batched: gather every original and decrypted value (texts kept exactly
    # as they stand), embed them in a few list requests, then compute the
    # cosine similarity of each (original, decrypted) pair from first
    # principles (dot product over the product of the norms) and sum them.
    separator = ', Value: '
    originals = []
    decrypteds = []
    for original_level, decrypted_level in enc_dec_pairs.items():
        originals.append(original_level[original_level.index(separator) + len(separator):])
        decrypteds.append(decrypted_level[decrypted_level.index(separator) + len(separator):])

    n_pairs = len(originals)
    if n_pairs == 0:
        return 0.0

    texts = originals + decrypteds
    batch_size = 1000  # stays below the API's limit on inputs per request
    vectors = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start:start + batch_size]
        response = client.embeddings.create(
            input=batch, model="text-embedding-3-small", dimensions=100)
        assert len(response.data) == len(batch)
        vectors.extend(item.embedding for item in response.data)

    embeddings = np.asarray(vectors, dtype=np.float64)
    original_embeddings = embeddings[:n_pairs]
    decrypted_embeddings = embeddings[n_pairs:]

    dots = np.einsum('ij,ij->i', original_embeddings, decrypted_embeddings)
    norms = np.linalg.norm(original_embeddings, axis=1) * np.linalg.norm(decrypted_embeddings, axis=1)
    similarities = dots / norms

    return float(np.sum(similarities))

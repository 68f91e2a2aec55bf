# Alternative 'vectorised-stack' for empathy-get-filtered-matrix: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: analysis/analysis_after_processing.py::get_filtered_matrix
    # Vectorised: read every (perceiver, experiencer) file into one
    # (n, n, n_narratives) array, drop the excluded narratives with a boolean
    # mask over the narrative axis, average along that axis, then z-score the
    # whole n x n matrix with its mean and population standard deviation.
    group_list = group_mappings[group_option]
    n = len(group_list)

    intensities = None
    for i, perceiver in enumerate(group_list):
        for j, experiencer in enumerate(group_list):
            file_path = (f'processed_results/'
                         f'{group_option}_{prompt_variation}_{model_id}_{perceiver}_{experiencer}.tsv')
            column = pd.read_csv(file_path, sep='\t')['intensity'].to_numpy(dtype=float)
            if intensities is None:
                intensities = np.empty((n, n, column.shape[0]), dtype=float)
            intensities[i, j, :] = column

    n_narratives = intensities.shape[2]
    keep = np.ones(n_narratives, dtype=bool)
    excluded_positions = np.array(
        [int(idx) for idx in excluded_ids if 0 <= int(idx) < n_narratives], dtype=int)
    keep[excluded_positions] = False

    mean_matrix = intensities[:, :, keep].mean(axis=2)
    return (mean_matrix - mean_matrix.mean()) / mean_matrix.std(ddof=0)

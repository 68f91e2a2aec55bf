# Alternative 'explicit-loops-rounded' for empathy-get-filtered-matrix: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: analysis/analysis_after_processing.py::get_filtered_matrix
    # Explicit loops: for each perceiver (row) and experiencer (column), read
    # the pair's intensities with get_intensity_list, average the narratives
    # that are not excluded (mean rounded to two decimals), and then
    # standardize all n * n cells together: subtract the overall mean and
    # divide by the population standard deviation (ddof = 0).
    group_list = group_mappings[group_option]
    n = len(group_list)
    matrix = np.zeros((n, n), dtype=float)

    for i, perceiver in tqdm(enumerate(group_list), total=n):
        for j, experiencer in enumerate(group_list):
            intensity_list, _ = get_intensity_list(group_option, prompt_variation, model_id, perceiver, experiencer)
            total, count = 0.0, 0
            for idx, intensity in enumerate(intensity_list):
                if idx in excluded_ids:
                    continue
                total += float(intensity)
                count += 1
            matrix[i, j] = round(total / count, 2)

    cells = [matrix[i, j] for i in range(n) for j in range(n)]
    overall_mean = sum(cells) / len(cells)
    population_std = (sum((c - overall_mean) ** 2 for c in cells) / len(cells)) ** 0.5

    normalized = np.zeros((n, n), dtype=float)
    for i in range(n):
        for j in range(n):
            normalized[i, j] = (matrix[i, j] - overall_mean) / population_std
    return normalized

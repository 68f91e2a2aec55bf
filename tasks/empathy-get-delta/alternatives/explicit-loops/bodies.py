# Alternative 'explicit-loops' for empathy-get-delta: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: analysis/analysis_after_processing.py::get_delta
    # Explicit loops: accumulate the sum and the count of the in-group and of
    # the out-group cells, cell by cell, and return the difference of the two
    # cell means (Empathy Gap Score: mean(in-group) - mean(out-group)).
    n_rows, n_cols = matrix.shape
    in_group_sum, in_group_count = 0.0, 0
    out_group_sum, out_group_count = 0.0, 0
    for i in range(n_rows):
        for j in range(n_cols):
            value = float(matrix[i, j])
            if check_in_group(group_option, i, j):
                in_group_sum += value
                in_group_count += 1
            else:
                out_group_sum += value
                out_group_count += 1
    delta = in_group_sum / in_group_count - out_group_sum / out_group_count
    return delta

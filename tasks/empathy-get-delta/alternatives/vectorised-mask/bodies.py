# Alternative 'vectorised-mask' for empathy-get-delta: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: analysis/analysis_after_processing.py::get_delta
    # Vectorised: build an n x n boolean in-group mask from check_in_group
    # (same ethnicity for 'ethnicity', the diagonal otherwise), then take the
    # mean of the masked cells minus the mean of the remaining cells.
    values = np.asarray(matrix, dtype=float)
    n = values.shape[0]
    in_group_mask = np.array(
        [[bool(check_in_group(group_option, i, j)) for j in range(n)] for i in range(n)],
        dtype=bool,
    )
    in_group_mean = values[in_group_mask].mean()
    out_group_mean = values[~in_group_mask].mean()
    return float(in_group_mean - out_group_mean)

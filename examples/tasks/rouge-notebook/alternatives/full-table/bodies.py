# Alternative 'full-table' for rouge-notebook: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: metrics.py::lcs_length
    m, n = len(a), len(b)
    # table[i][j] = LCS length of a[:i] and b[:j]
    table = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            if a[i - 1] == b[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return int(table[m][n])

# lmr-body: metrics.py::rouge_l
    cand = tokenize(candidate)   # Y, n words
    ref = tokenize(reference)    # X, m words
    if not cand or not ref:
        return 0.0
    lcs = lcs_length(ref, cand)
    if lcs == 0:
        return 0.0
    recall = lcs / len(ref)       # equation (2)
    precision = lcs / len(cand)   # equation (3)
    beta2 = beta ** 2
    return float((1 + beta2) * recall * precision / (recall + beta2 * precision))  # equation (4)

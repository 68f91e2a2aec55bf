# Alternative 'rolling-row' for rouge-notebook: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: metrics.py::lcs_length
    # Keep the shorter sequence along the row: one row of the DP table, O(min) memory.
    outer, inner = (a, b) if len(a) >= len(b) else (b, a)
    if not inner:
        return 0
    row = [0] * (len(inner) + 1)
    for x in outer:
        diagonal = 0  # row[j - 1] of the previous outer step
        for j, y in enumerate(inner, start=1):
            above = row[j]
            if x == y:
                row[j] = diagonal + 1
            elif row[j - 1] > above:
                row[j] = row[j - 1]
            diagonal = above
    return row[-1]

# lmr-body: metrics.py::rouge_l
    y_tokens = tokenize(candidate)
    x_tokens = tokenize(reference)
    n, m = len(y_tokens), len(x_tokens)
    common = lcs_length(x_tokens, y_tokens) if n and m else 0
    if common == 0:
        return 0.0
    # Substituting R = L/m and P = L/n into (1 + b^2) R P / (R + b^2 P) gives
    # (1 + b^2) L / (n + b^2 m).
    b2 = float(beta) * float(beta)
    return (1.0 + b2) * common / (n + b2 * m)

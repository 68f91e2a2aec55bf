# lmr base image {{tag}}: {{base}} (Python {{python}}) with pytest.
# Written by `lmr env build` from templates/docker/base-python.Dockerfile.
# Source: {{source}} (the official image, or a local copy named by {{variable}}).
FROM {{source}}
ENV LANG=C.UTF-8 LC_ALL=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1

# The official images have no pytest; pinned so the base is the same wherever it is built.
# build-ca.crt: the building machine's CA bundle, for pip behind a TLS-inspecting proxy.
COPY build-ca.crt /opt/lmr/build-ca.crt
RUN if [ -s /opt/lmr/build-ca.crt ]; then export PIP_CERT=/opt/lmr/build-ca.crt; fi \
 && python3 -m pip install --no-cache-dir --no-input "pytest=={{pytest}}" \
 && rm -f /opt/lmr/build-ca.crt

# Tests never run as root: lmr starts containers as this uid.
RUN (id -u lmr >/dev/null 2>&1 || useradd --uid {{uid}} --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin lmr) \
 && mkdir -p /opt/lmr /lmr/chan

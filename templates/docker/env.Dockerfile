# lmr environment image {{tag}}: {{summary}}
# Written by `lmr env build` from templates/docker/env.Dockerfile; the tag is a
# hash of this file, the spec below and the toolkit's harness (python/lmr_harness).
FROM {{base_image}}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1
{{#system_packages}}

# environment.system_packages (Debian)
RUN apt-get update \
 && apt-get install -y --no-install-recommends {{system_packages}} \
 && rm -rf /var/lib/apt/lists/*
{{/system_packages}}

# The interpreter tests run under: a venv over the base's Python, so the
# system packages stay visible (as on the host, see src/runner/python-env.ts).
RUN python3 -m venv --system-site-packages --without-pip /opt/lmr/venv
{{#requirements}}

# environment.requirements (pip). build-ca.crt is the building machine's CA
# bundle (pip behind a TLS-inspecting proxy); it is not part of the tag.
COPY requirements.txt build-ca.crt /opt/lmr/
RUN if [ -s /opt/lmr/build-ca.crt ]; then export PIP_CERT=/opt/lmr/build-ca.crt; fi \
 && /opt/lmr/venv/bin/python -m pip install --no-cache-dir --no-input -r /opt/lmr/requirements.txt \
 && rm -f /opt/lmr/build-ca.crt
{{/requirements}}
{{#node}}

# tests.runner "node-test": the base's own Node (Debian's nodejs: 18 on bookworm, 20 on
# trixie), the toolkit's Node harness, and the TypeScript compiler its hooks transpile with.
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs \
 && rm -rf /var/lib/apt/lists/*
COPY node/ /opt/lmr/node/
{{/node}}

# The toolkit's harness: pytest in-process, results as signed records.
COPY python/ /opt/lmr/python/
ENV PATH=/opt/lmr/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PYTHONDONTWRITEBYTECODE=1
USER {{uid}}:{{uid}}

# lmr base image {{tag}}: {{base}} with Python {{python}} and pytest.
# Written by `lmr env build` from templates/docker/base-debian.Dockerfile.
# Source: {{source}} (a registry image, or a Debian rootfs from `lmr env base --from-rootfs`).
FROM {{source}}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8

# A rootfs made by `lmr env base --from-rootfs` has these already, and then
# nothing is fetched; a registry image gets them from the Debian mirror.
RUN dpkg -s {{packages}} >/dev/null 2>&1 \
 || (apt-get update && apt-get install -y --no-install-recommends {{packages}} && rm -rf /var/lib/apt/lists/*)

# Tests never run as root: lmr starts containers as this uid.
RUN (id -u lmr >/dev/null 2>&1 || useradd --uid {{uid}} --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin lmr) \
 && mkdir -p /opt/lmr /lmr/chan

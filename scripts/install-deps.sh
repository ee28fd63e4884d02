#!/usr/bin/env bash
# Install what journey needs from Debian's packages; quiet and quick when all is present.
# Usage: scripts/install-deps.sh [extra-package...]
set -euo pipefail
pkgs=(g++ cmake make pkg-config libcli11-dev libspdlog-dev nlohmann-json3-dev libopenblas-dev
      catch2 libutf8proc-dev libonig-dev "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

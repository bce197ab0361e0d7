#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages a variant needs (as root, or through sudo).
#   scripts/deps.sh [cpu|cuda|hip]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck disable=SC2046
tsr_install_packages $(tsr_variant_packages "${1:-cpu}")

#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one libFuzzer target for SECONDS over its growing corpus (kept in the build directory, so
# a later run starts where this one stopped) and the seeds; libFuzzer's exit status is the test's:
# a crash, a sanitizer report, a leak or an input slower than 20 s fails it, and the input that
# did is left in the working directory as crash-*/timeout-*.
# Usage: run_fuzz.sh TARGET SECONDS CORPUS_DIR SEED_DIR...
set -eu
target=$1 seconds=$2 corpus=$3
shift 3
mkdir -p "$corpus"
# libFuzzer's own exit status for a crash is 77, which meson reads as a skipped test: 1 instead.
exec "$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
  -error_exitcode=1 "$corpus" "$@"

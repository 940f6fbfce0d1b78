#!/bin/sh
# Runs the issue-30 fuzz targets one after the other, ten minutes each, at low priority (see docs/fuzzing.md).
# Fork mode keeps a run going past a crash (each distinct one is left in artifacts/<target>/).
set -u
cd "$(dirname "$0")"
for target in ${TARGETS:-p4 stf dpi_rules hxdp ehdl}; do
    nice -n 15 cargo +nightly fuzz run -O "$target" "corpus/$target" -- \
        -max_total_time="${SECONDS_EACH:-600}" -rss_limit_mb=4096 -fork=1 -ignore_crashes=1 -ignore_ooms=1 \
        -ignore_timeouts=1 -timeout=10 > "${LOGDIR:-/tmp}/fuzz-$target.log" 2>&1
    echo "$target: exit $?" >> "${LOGDIR:-/tmp}/fuzz-summary.log"
done

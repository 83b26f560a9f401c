# SPDX-License-Identifier: MIT
# Plots a contactd-haptic CSV (--csv FILE): the rendered force and the total contact force on
# the probe (z, N) over time, the handle's and probe's height, and the send-to-result latency.
# Usage: gnuplot -e "csv='haptic.csv'; png='haptic.png'" clients/examples/haptic_plot.gp
if (!exists("csv")) csv = 'haptic.csv'
if (!exists("png")) png = 'haptic.png'
set terminal pngcairo size 1200,900 font ",10"
set output png
set datafile separator ","
# Lines starting with '#' are comments; the column-name row is skipped by its non-numbers.
set multiplot layout 3,1 title "contactd-haptic: ".csv
set grid
set key top right
set xlabel "t (s)"

set ylabel "force (N)"
plot csv using 1:9 with lines lw 2 title "rendered z (device)", \
     csv using 1:11 with lines title "contact z (on probe)", \
     csv using 1:8 with lines title "rendered x (device)"

set ylabel "height (m)"
plot csv using 1:4 with lines title "handle z", \
     csv using 1:6 with lines lw 2 title "probe z", \
     csv using 1:7 with lines title "tool bottom z"

set ylabel "latency (us)"
set logscale y
plot csv using 1:15 with dots title "send to result", \
     csv using 1:14 with dots title "solve"
unset multiplot

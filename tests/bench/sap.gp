# SPDX-License-Identifier: MIT
# Median cs_step time of SAP and the Lemke variants, one panel per scene family (x: contacts for
# peg and stack, bodies for clutter). Reads the CSV written by bench_sap (bench_common.h
# columns); call: gnuplot -e "csv='sap.csv'; png='sap.png'" sap.gp
set datafile separator ','
set terminal pngcairo size 1500,480 font ',10' noenhanced
set output png
set logscale y
set grid
set ylabel 'median time per step (us)'
set key top left
variants = 'sap lemke lemke-structural lemke-standard'
# Rows of bench b and variant v (awk keeps them contiguous, so lines join up).
rows(b, v) = sprintf("< awk -F, '$1 == \"%s\" && $2 == \"%s\"' '%s'", b, v, csv)
set multiplot layout 1,3
do for [b in 'peg stack clutter'] {
  set title sprintf('%s (20 instances per point)', b)
  set xlabel (b eq 'clutter' ? 'bodies' : 'contacts n')
  plot for [v in variants] rows(b, v) using 3:($5 / 1000.0) \
       smooth unique with linespoints pointsize 1.2 title v
}
unset multiplot

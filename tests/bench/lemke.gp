# SPDX-License-Identifier: MIT
# Median cs_step time against the number of contacts for each Lemke variant and the Siconos
# peer, one panel per experiment (Lloyd 2005 Figs. 4, 6 and 9, and the round peg). Reads the CSV
# written by bench_lemke (bench_common.h columns); call: gnuplot -e "csv='lemke.csv'; png='lemke.png'" lemke.gp
set datafile separator ','
set terminal pngcairo size 2000,480 font ',10' noenhanced
set output png
set logscale y
set grid
set xlabel 'contacts n'
set ylabel 'median time per solve (us)'
set key top left
variants = 'lemke-standard lemke-structural lemke siconos-lexicolemke'
# Rows of bench b and variant v (awk keeps them contiguous, so lines join up).
rows(b, v) = sprintf("< awk -F, '$1 == \"%s\" && $2 == \"%s\"' '%s'", b, v, csv)
set multiplot layout 1,4
do for [b in 'peg single stack round-peg'] {
  set title sprintf('%s (d = 8, %d wrenches per point)', b, b eq 'round-peg' ? 60 : 20)
  plot for [v in variants] rows(b, v) using 3:($5 / 1000.0) \
       smooth unique with linespoints pointsize 1.2 title v
}
unset multiplot

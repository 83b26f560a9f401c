# SPDX-License-Identifier: MIT
# Median time per solve of every solver and peer bench_solvers ran, one panel per scene family
# (x: contacts for peg and stack, bodies for clutter), one for the resting 4-block stacks (x: with
# friction, without) and one for the FCLIB global files (x: contacts, one point per file). The
# variants are read from the CSV, so solvers added later appear without edits here; a panel whose
# part was not run (--cases) says so. Reads bench_common.h columns; call:
# gnuplot -e "csv='solvers.csv'; png='solvers.png'" solvers.gp
set datafile separator ','
set terminal pngcairo size 2500,560 font ',10' noenhanced
set output png
set logscale y
set grid
set ylabel 'median time per solve (us)'
set key top left font ',8'
# Variants of bench b in the order they first appear.
variants(b) = system(sprintf("awk -F, 'NR > 1 && $1 == \"%s\" && !seen[$2]++ " . \
                             "{printf \"%%s \", $2}' '%s'", b, csv))
# Rows of bench b and variant v (awk keeps them contiguous, so lines join up).
rows(b, v) = sprintf("< awk -F, '$1 == \"%s\" && $2 == \"%s\"' '%s'", b, v, csv)
set multiplot layout 1,5
# Peers (ode-*, siconos-*) dashed, so the colours gnuplot repeats after eight stay apart.
peer(v) = strstrt(v, 'ode-') == 1 || strstrt(v, 'siconos-') == 1 ? 2 : 1
# An empty panel for a part that was not run.
not_run = "set label 1 'not run' at graph 0.45, graph 0.5; plot [1:10] [1:10] NaN notitle; " . \
          "unset label 1"
do for [b in 'peg stack clutter'] {
  set title sprintf('%s (20 instances per point, cold)', b)
  set xlabel (b eq 'clutter' ? 'bodies' : 'contacts n')
  vs = variants(b)
  if (words(vs) == 0) { eval not_run; continue }
  plot for [i = 1:words(vs)] rows(b, word(vs, i)) using 3:($5 / 1000.0) \
       smooth unique with linespoints lt i dt peer(word(vs, i)) pointsize 1.2 title word(vs, i)
}
set title 'stack of 4 at rest (16 contacts, cold)'
set xlabel ''
set xrange [0.5:2.5]
set xtics ('with friction' 1, 'mu = 0' 2)
rest(v) = sprintf("< awk -F, '($1 == \"stack-rest\" || $1 == \"stack-rest-mu0\") && " . \
                  "$2 == \"%s\" {print ($1 == \"stack-rest\" ? 1 : 2) \",\" $5}' '%s'", v, csv)
vs = variants('stack-rest')
if (words(vs) == 0) { eval not_run } else {
  plot for [i = 1:words(vs)] rest(word(vs, i)) using 1:($2 / 1000.0) \
       with linespoints lt i dt peer(word(vs, i)) pointsize 1.2 title word(vs, i)
}
set autoscale x
set xtics autofreq
set title 'FCLIB global files'
set xlabel 'contacts'
set logscale x
vs = variants('fclib')
if (words(vs) == 0) { eval not_run } else {
  plot for [i = 1:words(vs)] rows('fclib', word(vs, i)) using 3:($5 / 1000.0) \
       with points lt i pointsize 1.5 title word(vs, i)
}
unset multiplot

# Chapter 2: the gap between validation and training error of a small and a large model as the
# training set shrinks. Data: ch02_gap.dat, written by the lesson; the x range and tics come from
# its rows. The build sets the terminal and the output file.
set title "Validation MAE minus training MAE of a small and a larger model, by training rows\n{/*0.85 fold 1, after 100 epochs, mean of three seeds}"
set xlabel "training rows"
set ylabel "gap ($1000s)"
stats "ch02_gap.dat" using 1 nooutput
set logscale x 2
set xrange [STATS_min / 1.25 : STATS_max * 1.25]
set yrange [0:*]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque
set style line 1 lc rgb "#2471a3" lw 2 pt 5 ps 1.4
set style line 2 lc rgb "#c0392b" lw 2 pt 7 ps 1.4
plot "ch02_gap.dat" using 1:2:xtic(1) with linespoints ls 1 title "2 x 64 (small)", \
     "ch02_gap.dat" using 1:3 with linespoints ls 2 title "3 x 128 (larger)"

# Chapter 3: the variance of q·k grows like d_k; dividing by sqrt(d_k) holds it near 1.
# Data: ch03_variance.dat, written by the lesson (columns d_k, var_unscaled, var_scaled,
# theory_unscaled). The build sets the terminal and the output file.
set title "The variance of q·k grows like d_k; dividing by √d_k keeps it near 1\n{/*0.85 random q and k with iid N(0, 1) components}"
set xlabel "d_k (length of the query and key vectors)"
set ylabel "variance of the score over random pairs"
set logscale xy 2
set format x "%g"
set format y "%g"
set xrange [3:1400]
set yrange [0.25:4096]
set xtics (4, 16, 64, 256, 1024)
set ytics ("1/4" 0.25, 1, 4, 16, 64, 256, 1024, 4096)
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque
set style line 1 lc rgb "#c0392b" lw 2 pt 7 ps 1.2
set style line 2 lc rgb "#2471a3" lw 2 pt 5 ps 1.2
set style line 3 lc rgb "#7f8c8d" lw 1.5 dt 2
plot "ch03_variance.dat" using 1:4 with lines ls 3 title "theory: d_k and 1", \
     1 with lines ls 3 notitle, \
     "ch03_variance.dat" using 1:2 with linespoints ls 1 title "q·k (unscaled)", \
     "ch03_variance.dat" using 1:3 with linespoints ls 2 title "q·k / √d_k (scaled)"

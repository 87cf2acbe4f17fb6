# Chapter 3: without scaling, softmax attention concentrates on one key as d_k grows.
# Data: ch03_entropy.dat, written by the lesson (columns d_k, entropy_unscaled, entropy_scaled,
# ln_m). The build sets the terminal and the output file.
set title "Without scaling, attention concentrates on one key as d_k grows\n{/*0.85 mean entropy of a row of softmax weights, random q and k}"
set xlabel "d_k (length of the query and key vectors)"
set ylabel "mean entropy of a row of weights (nats)"
set logscale x 2
set format x "%g"
set xrange [0.8:1300]
set yrange [0:3.1]
set xtics (1, 4, 16, 64, 256, 1024)
set grid xtics ytics lc rgb "#dddddd"
set key at graph 0.98, graph 0.70 right top Left reverse box opaque
set style line 1 lc rgb "#c0392b" lw 2 pt 7 ps 1.2
set style line 2 lc rgb "#2471a3" lw 2 pt 5 ps 1.2
set style line 3 lc rgb "#7f8c8d" lw 1.5 dt 2
plot "ch03_entropy.dat" using 1:4 with lines ls 3 title "ln m, uniform attention", \
     "ch03_entropy.dat" using 1:3 with linespoints ls 2 title "scaled: q·k / √d_k", \
     "ch03_entropy.dat" using 1:2 with linespoints ls 1 title "unscaled: q·k", \
     0 with lines lc rgb "#7f8c8d" lw 1 notitle

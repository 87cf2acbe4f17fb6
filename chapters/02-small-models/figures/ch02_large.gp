# Chapter 2: validation MAE per epoch of the small and the larger model on fold 1 (303 training
# rows). Data: ch02_large.dat, written by the lesson. The build sets the terminal and the output.
set title "The larger model gets worse on validation sooner\n{/*0.85 validation MAE per epoch, fold 1, 303 training rows}"
set xlabel "epoch"
set ylabel "validation MAE ($1000s)"
set xrange [1:100]
set yrange [2:5]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque
set style line 1 lc rgb "#2471a3" lw 2
set style line 2 lc rgb "#c0392b" lw 2
plot "ch02_large.dat" using 1:2 with lines ls 1 title "2 x 64 (small)", \
     "ch02_large.dat" using 1:3 with lines ls 2 title "3 x 128 (larger)"

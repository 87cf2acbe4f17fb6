# Chapter 1: gradient descent on least squares, raw vs standardised Boston features.
# Data: ch01_descent_raw.dat and ch01_descent_scaled.dat, written by the lesson (step, loss minus
# the optimal loss).
# The build sets the terminal and the output file.
set title "Gradient descent on least squares: standardised features converge, raw ones crawl\n{/*0.85 loss above the optimum, step 1 / largest curvature, 404 Boston training rows}"
set xlabel "step + 1"
set ylabel "loss - optimal loss"
set logscale xy
set format y "10^{%L}"
set xrange [1:20000]
set yrange [1e-8:1000]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque
set style line 1 lc rgb "#c0392b" lw 2
set style line 2 lc rgb "#2471a3" lw 2
plot "ch01_descent_raw.dat" using ($1+1):2 with lines ls 1 title "raw features", \
     "ch01_descent_scaled.dat" using ($1+1):2 with lines ls 2 title "standardised features"

# Chapter 8: the variance of the scaled scores q·k/√d_k at initialisation, as the tokens' scale s
# varies, without normalisation and after LayerNorm or RMSNorm.
# Data: ch08_init_variance.dat, written by the lesson (columns s, var_none, var_layer_norm,
# var_rms_norm). The build sets the terminal and the output file.
set title "After LayerNorm or RMSNorm the scores' variance no longer follows the tokens' scale\n{/*0.85 q·k/√d_k with projections drawn with variance 1/d_model, as at the start of training}"
set xlabel "scale s of the tokens"
set ylabel "variance of q·k / √d_k"
set logscale xy 10
set format x "10^{%L}"
set format y "10^{%L}"
set xrange [5e-4:2e3]
set yrange [1e-12:1e14]
set ytics 1e-12, 1e4, 1e12
set grid xtics ytics lc rgb "#dddddd"
set key top left box opaque
set style line 1 lc rgb "#7f8c8d" lw 2 pt 7 ps 1.2
set style line 2 lc rgb "#2471a3" lw 2 pt 5 ps 1.2
set style line 3 lc rgb "#c0392b" lw 2 pt 9 ps 1.2 dt 2
plot "ch08_init_variance.dat" using 1:2 with linespoints ls 1 title "no normalisation", \
     "ch08_init_variance.dat" using 1:3 with linespoints ls 2 title "LayerNorm", \
     "ch08_init_variance.dat" using 1:4 with linespoints ls 3 title "RMSNorm"

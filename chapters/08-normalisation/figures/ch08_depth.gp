# Chapter 8: the gradient of each block's second feed-forward weights at initialisation, block by
# block, in a post-LN and a pre-LN stack of 12 blocks.
# Data: ch08_depth.dat, written by the lesson (columns block, post_ln, pre_ln). The build sets the
# terminal and the output file.
set title "At initialisation post-LN's blocks get gradients of one size, pre-LN's less towards the output\n{/*0.85 ||∂L/∂W_2|| in each block of a 12-block stack, the mean of 8 draws}"
set xlabel "block (1 is next to the input, 12 next to the output)"
set ylabel "||∂L/∂W_2|| (Frobenius norm)"
set xrange [0.5:12.5]
set yrange [0:*]
set xtics 1, 1, 12
set grid xtics ytics lc rgb "#dddddd"
set key bottom left box opaque
set style line 1 lc rgb "#c0392b" lw 2 pt 7 ps 1.2
set style line 2 lc rgb "#2471a3" lw 2 pt 5 ps 1.2
plot "ch08_depth.dat" using 1:2 with linespoints ls 1 title "post-LN: x ← LN(x + F(x))", \
     "ch08_depth.dat" using 1:3 with linespoints ls 2 title "pre-LN: x ← x + F(LN(x))"

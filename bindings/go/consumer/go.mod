module example.com/hello

go 1.19

require libcomm.org/comm v0.0.0

// The checkout this file is in; run.sh, which builds a copy elsewhere,
// points it at the same checkout by its absolute path.
replace libcomm.org/comm => ../

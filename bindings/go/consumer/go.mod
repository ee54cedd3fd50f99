module example.com/hello

go 1.19

require libcomm.org/comm v0.0.0

// run.sh points this at an installed copy of the module.
replace libcomm.org/comm => ../

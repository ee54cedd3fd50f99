module libcomm.org/comm

go 1.19

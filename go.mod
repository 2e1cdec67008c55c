module github.com/storel/storel

go 1.26

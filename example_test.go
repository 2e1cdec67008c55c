package storel_test

import (
	"fmt"
	"log"

	"github.com/storel/storel"
	"github.com/storel/storel/storage"
	"github.com/storel/storel/value"
)

// Example computes y = C x for the paper's Fig. 1 (b) matrix stored in
// CSR, through the Go API.
func Example() {
	w := storel.NewWorkspace()
	c := &storage.COO{
		Dims:   []int64{3, 4},
		Coords: [][]int64{{0, 0, 0, 2, 2}, {0, 2, 3, 0, 3}},
		Vals:   []float64{6, 9, 8, 5, 7},
		Field:  "real",
	}
	if err := w.AddTensor("C", c, "csr"); err != nil {
		log.Fatal(err)
	}
	w.SetObject("x", storage.RealArray([]float64{1, 2, 3, 4}))
	prog, err := w.Compile("spmv.sdql", []byte(`
		CREATE real ARRAY x(C_dim2);
		CREATE TENSOR y AS sum(<(i,j), v> in C) { i -> v * x(j) };
	`), "")
	if err != nil {
		log.Fatal(err)
	}
	res, err := prog.Run(storel.RunOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Type)
	for _, e := range value.Entries(res.Value) {
		fmt.Println(e.Coords, e.Val)
	}
	// Output:
	// {int -> real}
	// [0] 65
	// [2] 33
}

// Example_loadTensor is the README's Go API example: SpMV over a matrix
// read from a Matrix Market file and stored in CSR, x from a text file.
func Example_loadTensor() {
	src := []byte(`CREATE real ARRAY x(A_dim2);
		CREATE TENSOR y AS sum(<(i,j), a> in A) { i -> a * x(j) };`)
	w := storel.NewWorkspace()
	if err := w.LoadTensor("A", "examples/data/m.mtx", "csr", storage.ReadOptions{}); err != nil {
		log.Fatal(err)
	}
	if err := w.SetData("x", "examples/data/v.txt"); err != nil {
		log.Fatal(err)
	}
	prog, err := w.Compile("spmv.sdql", src, "")
	if err != nil {
		log.Fatal(err)
	}
	res, err := prog.Run(storel.RunOptions{Threads: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range value.Entries(res.Value) {
		fmt.Println(e.Coords, e.Val)
	}
	// Output:
	// [0] 65
	// [2] 33
	// [3] 12
}

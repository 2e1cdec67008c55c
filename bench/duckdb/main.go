// Command duckdb-peer runs one of the paper's kernels in DuckDB, the way
// the paper's §6.1 does: every tensor is a relation of its non-zeros
// (coordinates and value, comparable to COO), the kernel is a SQL join with
// GROUP BY, and the database is in memory.
//
// It reads the same files as storel (.mtx, .tns, optionally .gz; vectors
// from .npy or .txt), reports each phase on stderr as storel does
// ("timing: <phase> <ms> ms": load = reading files, build = filling the
// tables, execute = the median over --repeat runs of the query, including
// fetching its rows), and writes the answer for the harness to check:
// PREFIX.idx.npy (n x order, 0-based int64 coordinates) and PREFIX.val.npy
// (n float64 values); a scalar answer is PREFIX.val.npy alone.
package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/storel/storel/internal/atomicfile"
	"github.com/storel/storel/ir"
	"github.com/storel/storel/storage"
)

// kernels maps a kernel to its SQL, over tables named as the storel
// program names its tensors. Matrices are (i, j, v), 3-tensors (i, j, k, v),
// vectors (i, v); scalars are substituted as literals (:beta).
var kernels = map[string]struct {
	sql   string
	order int // order of the answer
}{
	// Q(i,j) = sum_k A(i,k) B(k,j)
	"mmm": {`SELECT A.i, B.j, SUM(A.v * B.v) FROM A JOIN B ON A.j = B.i GROUP BY A.i, B.j`, 2},
	// Q() = sum_{i,j,k} A(i,k) B(k,j)
	"summmm": {`SELECT SUM(A.v * B.v) FROM A JOIN B ON A.j = B.i`, 0},
	// Q(j) = sum_{i,k} beta A(i,j) A(i,k) x(k)
	"batax": {`SELECT A1.j, SUM(:beta * A1.v * A2.v * x.v) FROM A AS A1 JOIN A AS A2 ON A1.i = A2.i JOIN x ON A2.j = x.i GROUP BY A1.j`, 1},
	// y(i) = sum_j A(i,j) x(j)   (SpMV; not among the paper's kernels)
	"spmv": {`SELECT A.i, SUM(A.v * x.v) FROM A JOIN x ON A.j = x.i GROUP BY A.i`, 1},
	// Q(i,j,k) = sum_l A(i,j,l) B(k,l)
	"ttm": {`SELECT A.i, A.j, B.i, SUM(A.v * B.v) FROM A JOIN B ON A.k = B.j GROUP BY A.i, A.j, B.i`, 3},
	// A(i,j) = sum_{k,l} B(i,k,l) C(k,j) D(j,l)   (D indexed (j,l) as in examples/mttkrp.sdql)
	"mttkrp": {`SELECT B.i, C.j, SUM(B.v * C.v * D.v) FROM B JOIN C ON B.j = C.i JOIN D ON B.k = D.j AND C.j = D.i GROUP BY B.i, C.j`, 2},
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "duckdb-peer: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 1 && args[0] == "--version" {
		return printVersion()
	}
	fs := flag.NewFlagSet("duckdb-peer", flag.ContinueOnError)
	var tensors, data, dims multiFlag
	kernel := fs.String("kernel", "", "kernel: mmm, summmm, batax, spmv, ttm, mttkrp")
	fs.Var(&tensors, "tensor", "NAME=FILE (.mtx/.tns, optionally .gz); repeatable")
	fs.Var(&dims, "dims", "NAME=D1,D2,... sizes of a tensor's modes")
	fs.Var(&data, "data", "NAME=FILE.npy|FILE.txt (vector) or NAME=NUMBER (scalar); repeatable")
	output := fs.String("output", "", "prefix of the answer files")
	repeat := fs.Int("repeat", 5, "runs of the query; the median is reported")
	threads := fs.Int("threads", 1, "DuckDB worker threads")
	if err := fs.Parse(args); err != nil {
		return err
	}
	k, ok := kernels[*kernel]
	if !ok {
		return fmt.Errorf("unknown --kernel %q", *kernel)
	}
	if *repeat < 1 || *threads < 1 {
		return errors.New("--repeat and --threads want at least 1")
	}

	start := time.Now()
	rels := map[string]*storage.COO{}
	for _, t := range tensors {
		name, path, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("--tensor %s: want NAME=FILE", t)
		}
		opt := storage.ReadOptions{}
		for _, d := range dims {
			if n, list, _ := strings.Cut(d, "="); n == name {
				for _, s := range strings.Split(list, ",") {
					v, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						return fmt.Errorf("--dims %s: %v", d, err)
					}
					opt.Dims = append(opt.Dims, v)
				}
			}
		}
		c, err := storage.ReadTensorFile(path, opt)
		if err != nil {
			return err
		}
		rels[name] = c
	}
	query := k.sql
	for _, d := range data {
		name, spec, ok := strings.Cut(d, "=")
		if !ok {
			return fmt.Errorf("--data %s: want NAME=FILE or NAME=NUMBER", d)
		}
		if f, err := strconv.ParseFloat(spec, 64); err == nil {
			query = strings.ReplaceAll(query, ":"+name, strconv.FormatFloat(f, 'g', -1, 64))
			continue
		}
		a, err := storage.ReadArrayFile(spec, ir.Real)
		if err != nil {
			return err
		}
		c := &storage.COO{Dims: []int64{int64(len(a.F))}, Coords: [][]int64{make([]int64, 0, len(a.F))}}
		for i, v := range a.F {
			if v != 0 {
				c.Coords[0] = append(c.Coords[0], int64(i))
				c.Vals = append(c.Vals, v)
			}
		}
		rels[name] = c
	}
	timing("load", time.Since(start))

	ctx := context.Background()
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return err
	}
	defer connector.Close()
	db := sql.OpenDB(connector)
	defer db.Close()
	// One connection: the appender and the queries must see the same
	// session settings, and a single thread means a single connection.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads TO %d", *threads)); err != nil {
		return err
	}

	start = time.Now()
	names := make([]string, 0, len(rels))
	for n := range rels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := loadRelation(ctx, connector, db, n, rels[n]); err != nil {
			return fmt.Errorf("loading %s into DuckDB: %v", n, err)
		}
	}
	timing("build", time.Since(start))

	var times []time.Duration
	var idx []int64
	var vals []float64
	for r := 0; r < *repeat; r++ {
		start = time.Now()
		idx, vals, err = runQuery(ctx, db, query, k.order)
		if err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	timing("execute", times[len(times)/2])

	if *output != "" {
		start = time.Now()
		if err := writeAnswer(*output, k.order, idx, vals); err != nil {
			return err
		}
		timing("write", time.Since(start))
	}
	return nil
}

func timing(phase string, d time.Duration) {
	fmt.Fprintf(os.Stderr, "timing: %s %.3f ms\n", phase, float64(d.Microseconds())/1000)
}

var columns = []string{"i", "j", "k", "l"}

// loadRelation creates table name(i, j, ..., v) and appends c's non-zeros.
func loadRelation(ctx context.Context, connector *duckdb.Connector, db *sql.DB, name string, c *storage.COO) error {
	order := len(c.Dims)
	if order > len(columns) {
		return fmt.Errorf("order %d is not supported", order)
	}
	var cols []string
	for m := 0; m < order; m++ {
		cols = append(cols, columns[m]+" BIGINT")
	}
	cols = append(cols, "v DOUBLE")
	if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", name, strings.Join(cols, ", "))); err != nil {
		return err
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	app, err := duckdb.NewAppenderFromConn(conn, "", name)
	if err != nil {
		return err
	}
	row := make([]driver.Value, order+1)
	for p := range c.Vals {
		for m := 0; m < order; m++ {
			row[m] = c.Coords[m][p]
		}
		row[order] = c.Vals[p]
		if err := app.AppendRow(row...); err != nil {
			app.Close()
			return err
		}
	}
	return app.Close()
}

// runQuery runs query and returns its rows: order coordinates then a value.
func runQuery(ctx context.Context, db *sql.DB, query string, order int) ([]int64, []float64, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var idx []int64
	var vals []float64
	coords := make([]int64, order)
	dest := make([]any, order+1)
	for m := range coords {
		dest[m] = &coords[m]
	}
	var v sql.NullFloat64
	dest[order] = &v
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		idx = append(idx, coords...)
		vals = append(vals, v.Float64) // NULL: SUM over no rows, i.e. 0
	}
	return idx, vals, rows.Err()
}

func writeAnswer(prefix string, order int, idx []int64, vals []float64) error {
	if vals == nil {
		vals = []float64{}
	}
	if order > 0 {
		if err := writeNPY(prefix+".idx.npy", []int64{int64(len(vals)), int64(order)}, idx, nil); err != nil {
			return err
		}
	}
	return writeNPY(prefix+".val.npy", []int64{int64(len(vals))}, nil, vals)
}

func writeNPY(path string, shape []int64, ints []int64, reals []float64) error {
	if ints == nil && reals == nil {
		ints = []int64{}
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		return storage.WriteNPY(w, shape, ints, reals)
	})
}

// printVersion prints the DuckDB library's version.
func printVersion() error {
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return err
	}
	defer connector.Close()
	db := sql.OpenDB(connector)
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT version()").Scan(&v); err != nil {
		return err
	}
	fmt.Println("DuckDB", v)
	return nil
}

package storage

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	cases := []struct {
		in     string
		order  int // order to fix it to
		levels string
	}{
		{"dense", 3, "ddd"}, {"coo", 3, "quu"}, {"csr", 2, "ds"}, {"csc", 2, "ds:1,0"},
		{"dcsr", 2, "ss"}, {"DCSC", 2, "ss:1,0"}, {"csf", 4, "ssss"}, {"ds", 2, "ds"},
		{"ss:1,0", 2, "ss:1,0"}, {"sss:0,2,1", 3, "sss:0,2,1"}, {" d ", 1, "d"}, {"coo", 1, "q"},
		{"sd:0,1", 2, "sd"},
	}
	for _, tc := range cases {
		f, err := ParseFormat(tc.in)
		if err != nil {
			t.Errorf("ParseFormat(%q): %v", tc.in, err)
			continue
		}
		g, err := f.ForOrder(tc.order)
		if err != nil {
			t.Errorf("%q.ForOrder(%d): %v", tc.in, tc.order, err)
			continue
		}
		if got := g.LevelString(); got != tc.levels {
			t.Errorf("%q: levels %q, want %q", tc.in, got, tc.levels)
		}
	}
	for _, name := range []string{"hash", "trie"} {
		f, err := ParseFormat(name)
		if err != nil {
			t.Fatal(err)
		}
		g, err := f.ForOrder(3)
		if err != nil || len(g.Levels) != 0 || !reflect.DeepEqual(g.ModeOrder, []int{0, 1, 2}) {
			t.Errorf("%s.ForOrder(3) = %+v, %v", name, g, err)
		}
	}
}

func TestParseFormatErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "empty format"},
		{"crs", `unknown format "crs"`},
		{"dx", `level 2 of a level string must be d (dense) or s (sparse), not "x"`},
		{"ds:0", "mode order lists 1 modes for 2 levels"},
		{"ds:0,0", "mode 0 appears twice"},
		{"ds:0,2", `mode order entry "2" must be a mode number 0..1`},
		{"ds:a,b", `mode order entry "a"`},
		{":0", "no levels"},
		{"hash+pattern", "+pattern needs a level format"},
		{"dense+pattern", "+pattern needs a sparse last level"},
		{"sd+pattern", "+pattern needs a sparse last level"},
		{"crs+pattern", `unknown format "crs"`},
	}
	for _, tc := range cases {
		_, err := ParseFormat(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFormat(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
	f, _ := ParseFormat("csr")
	if _, err := f.ForOrder(3); err == nil || !strings.Contains(err.Error(), "order 2, not 3") {
		t.Errorf("csr for order 3: %v", err)
	}
	f, _ = ParseFormat("dense")
	if _, err := f.ForOrder(0); err == nil {
		t.Errorf("dense of order 0 accepted")
	}
}

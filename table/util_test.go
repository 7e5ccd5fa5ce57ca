package table_test

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/table/fileio"
)

func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

// copyAll copies every file of the table directory tree from src to dst.
func copyAll(t *testing.T, src, dst fileio.FS) {
	t.Helper()
	var walk func(dir string)
	walk = func(dir string) {
		files, _ := src.List(dir)
		for _, f := range files {
			b, err := src.ReadFile(dir + "/" + f.Name)
			if err != nil {
				t.Fatal(err)
			}
			dst.WriteFile(dir+"/"+f.Name, b)
		}
		dirs, _ := src.ListDirs(dir)
		for _, d := range dirs {
			walk(dir + "/" + d)
		}
	}
	walk("wh")
}

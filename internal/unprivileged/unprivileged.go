// Package unprivileged runs a test as an ordinary user when the test
// binary runs as root, as it does in CI: root reads any file, so what a
// user sees of a folder made unreadable can only be tested without it.
package unprivileged

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// nobody is the conventional unprivileged user and group.
const nobody = 65534

const childEnv = "LORE_TEST_UNPRIVILEGED"

// Rerun, called first in a test that needs permissions to hold, tells
// whether the test already ran elsewhere: as root it runs this test again
// in a child process as user nobody, reports the child's failure or skip
// as its own and returns true (the caller returns). Run by anyone else,
// or in that child, it returns false and the test goes on here.
func Rerun(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 || os.Getenv(childEnv) != "" {
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary to run it as nobody: %v", err)
	}
	// The child needs a binary and a temporary folder it may use: the
	// ones go test made are root's alone.
	tmp := t.TempDir()
	for d := tmp; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o005); err != nil {
				t.Skipf("cannot open %s to nobody: %v", d, err)
			}
			// Put back when the test ends: an ancestor (a home folder)
			// must not stay open to everyone.
			d, mode := d, fi.Mode().Perm()
			t.Cleanup(func() { os.Chmod(d, mode) })
		}
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "test.bin")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, p := range strings.Split(t.Name(), "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	cmd := exec.Command(bin, "-test.run", strings.Join(parts, "/"), "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), childEnv+"=1", "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	switch {
	case err != nil && cmd.ProcessState == nil:
		t.Skipf("cannot run the test as nobody (%v): run it as an ordinary user", err)
	case err != nil:
		t.Fatalf("run as nobody: %v\n%s", err, out.String())
	case strings.Contains(out.String(), "--- SKIP"):
		t.Skipf("skipped as nobody:\n%s", out.String())
	case !strings.Contains(out.String(), "--- PASS"):
		t.Fatalf("run as nobody: the test did not run:\n%s", out.String())
	}
	t.Logf("ran as nobody (uid %d)", nobody)
	return true
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

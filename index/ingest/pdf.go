package ingest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrNoPDFTool marks PDFs skipped because pdftotext is not installed.
var ErrNoPDFTool = errors.New("pdftotext is not installed (apt install poppler-utils)")

// pdfToText runs pdftotext. Line numbers of PDF chunks are lines of its
// output, the closest thing a PDF has to lines on disk.
func pdfToText(ctx context.Context, path string) (string, error) {
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		return "", ErrNoPDFTool
	}
	out, err := exec.CommandContext(ctx, bin, "-enc", "UTF-8", "-q", path, "-").Output()
	if err != nil {
		return "", fmt.Errorf("pdftotext: %w", err)
	}
	return strings.ReplaceAll(string(out), "\f", "\n"), nil
}

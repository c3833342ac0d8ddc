package local

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/lore-cli/lore/index/ingest"
)

// minimalPDF writes a one-page PDF showing text, with a correct xref table.
func minimalPDF(text string) []byte {
	stream := fmt.Sprintf("BT /F1 24 Tf 72 700 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func TestPDF(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	writeFiles(t, src, map[string]string{"manual.pdf": string(minimalPDF("Quarterly zeppelin maintenance")), "a.md": "# A\n\ntext\n"})
	sum := build(t, dir, testOptions(nil, src))
	if _, err := exec.LookPath("pdftotext"); err != nil {
		// Without the tool: skipped, with one notice that says how to get it.
		if len(sum.FilesSkipped) != 1 || sum.FilesSkipped[0].Reason != ingest.ErrNoPDFTool.Error() {
			t.Fatalf("skipped: %+v", sum.FilesSkipped)
		}
		if !strings.Contains(strings.Join(sum.Warnings, "\n"), "poppler-utils") {
			t.Fatalf("no notice: %v", sum.Warnings)
		}
		return
	}
	if sum.FilesIndexed != 2 || lexicalCount(t, dir, "zeppelin") != 1 {
		t.Fatalf("PDF text not indexed: %+v", sum)
	}
}

package bytesize

import "testing"

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1000: "1000 bytes", 1024: "1 KiB", 1536: "1536 bytes", 64 << 10: "64 KiB",
		10 << 20: "10 MiB", 5<<20 + 1: "5242881 bytes", 3 << 30: "3072 MiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

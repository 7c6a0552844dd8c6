package workbook

// SetBeforeCheck runs f between preparing a local write and checking that
// the file is unchanged, so a test can edit the file in that window.
func (l *Local) SetBeforeCheck(f func()) { l.beforeCheck = f }

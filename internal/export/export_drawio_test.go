package export

// SetStyleForTest is setStyle, for the tests of package export_test.
var SetStyleForTest = setStyle

package plugin

// MatchPattern is matchPattern, for the tests.
var MatchPattern = matchPattern

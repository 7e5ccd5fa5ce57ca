package server

import (
	"maps"
	"slices"
	"strings"
)

// showAll is Show.What for SHOW ALL.
const showAll = "all"

// sessionSettings are the parameters whose value the session computes
// (Session.setting's own cases), with fixedSettings the parameters SHOW
// knows.
var sessionSettings = []string{
	"timezone", "server_version", "default_transaction_read_only", "transaction_read_only",
	"statement_timeout", "consistency", "last_read_epoch",
}

// settingDescriptions are the descriptions SHOW ALL gives, PostgreSQL's
// short descriptions for its parameters and Strata's own for consistency
// and last_read_epoch. Every name SHOW knows has one (a test checks).
var settingDescriptions = map[string]string{
	"application_name":              "Sets the application name to be reported in statistics and logs.",
	"bytea_output":                  "Sets the output format for bytea.",
	"client_encoding":               "Sets the client's character set encoding.",
	"client_min_messages":           "Sets the message levels that are sent to the client.",
	"consistency":                   "Sets how a read picks its epochs: strong reads after this session's writes and never an older epoch than a read before it; weak reads each group of related tables at its latest common epoch.",
	"datestyle":                     "Sets the display format for date and time values.",
	"default_transaction_isolation": "Sets the transaction isolation level of each new transaction.",
	"default_transaction_read_only": "Sets the default read-only status of new transactions.",
	"extra_float_digits":            "Sets the number of digits displayed for floating-point values.",
	"integer_datetimes":             "Shows whether datetimes are integer based.",
	"intervalstyle":                 "Sets the display format for interval values.",
	"is_superuser":                  "Shows whether the current user is a superuser.",
	"last_read_epoch":               "Shows the epoch the session's last read saw (for AS OF EPOCH).",
	"lc_collate":                    "Shows the collation order locale.",
	"lc_ctype":                      "Shows the character classification and case conversion locale.",
	"lc_messages":                   "Sets the language in which messages are displayed.",
	"max_identifier_length":         "Shows the maximum identifier length.",
	"search_path":                   "Sets the schema search order for names that are not schema-qualified.",
	"server_encoding":               "Shows the server (database) character set encoding.",
	"server_version":                "Shows the server version.",
	"server_version_num":            "Shows the server version as an integer.",
	"standard_conforming_strings":   "Causes '...' strings to treat backslashes literally.",
	"statement_timeout":             "Sets the maximum allowed duration of any statement.",
	"timezone":                      "Sets the time zone for displaying and interpreting time stamps.",
	"transaction_isolation":         "Sets the current transaction's isolation level.",
	"transaction_read_only":         "Sets the current transaction's read-only status.",
}

// settingNamesForShow returns the lower-case names of every parameter
// SHOW knows, sorted.
func settingNamesForShow() []string {
	names := slices.Collect(maps.Keys(fixedSettings))
	names = append(names, sessionSettings...)
	slices.Sort(names)
	return slices.Compact(names)
}

// showAllRows are the rows of SHOW ALL, as PostgreSQL gives them: name
// (PostgreSQL's spelling, settingName), setting and description, one row
// per parameter SHOW knows, ordered by name without regard to case.
func (s *Session) showAllRows() [][]string {
	var rows [][]string
	for _, n := range settingNamesForShow() {
		v, _ := s.setting(n)
		rows = append(rows, []string{settingName(n), v, settingDescriptions[n]})
	}
	slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(strings.ToLower(a[0]), strings.ToLower(b[0])) })
	return rows
}

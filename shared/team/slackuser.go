package team

import "regexp"

// slackUserID is the shape of a Slack member id: U (or W on Enterprise
// Grid), then upper-case letters and digits. A channel id (C…, G…) or name
// (#…) never matches, so nothing addressed to a member id reaches a channel.
var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)

// ValidSlackUserID reports whether id is shaped like a Slack member id.
func ValidSlackUserID(id string) bool { return slackUserID.MatchString(id) }

package notify

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Block Kit builders. Whatever varies (an agent's call, input, reason,
// summary and evidence, names, outcomes) goes to Slack as literal text: the
// text elements of rich_text blocks and plain_text objects, which Slack
// shows as they are. mrkdwn, which has no escape for * _ ~ ` or ```, is not
// used: in it an input's ``` closed its code block and what followed
// rendered as the message's own words.

func header(text string) map[string]any {
	return map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": clip(text, slackHeaderMax), "emoji": false}}
}

// richText is a rich_text block of rich text elements (paragraphs, preformatted).
func richText(elements ...any) map[string]any {
	return map[string]any{"type": "rich_text", "elements": elements}
}

// paragraph is a rich_text_section of text elements.
func paragraph(texts ...any) map[string]any {
	return map[string]any{"type": "rich_text_section", "elements": texts}
}

// literal is text shown exactly as it is, within Slack's limit of a text.
func literal(text string) map[string]any {
	return map[string]any{"type": "text", "text": clip(text, slackTextMax)}
}

func bold(text string) map[string]any {
	t := literal(text)
	t["style"] = map[string]any{"bold": true}
	return t
}

// labelled is a bold label over its text.
func labelled(label, text string) map[string]any {
	return richText(paragraph(bold(label+"\n"), literal(text)))
}

// factsBlock is the facts, a bold label before each value, one per line.
func factsBlock(facts [][2]string) map[string]any {
	texts := make([]any, 0, 2*len(facts))
	for i, f := range facts {
		value := clip(f[1], slackFactMax)
		if i < len(facts)-1 {
			value += "\n"
		}
		texts = append(texts, bold(f[0]+": "), literal(value))
	}
	return richText(paragraph(texts...))
}

// inputBlock is a step's input under its label, pretty-printed in a
// preformatted element: whatever the input holds stays inside it.
func inputBlock(label string, input []byte) map[string]any {
	return richText(paragraph(bold(label)), map[string]any{"type": "rich_text_preformatted", "elements": []any{literal(PrettyInput(input, inputSlackMax))}})
}

func contextBlock(text string) map[string]any {
	return map[string]any{"type": "context", "elements": []any{map[string]any{"type": "plain_text", "text": clip(text, slackTextMax), "emoji": false}}}
}

// esc escapes the three characters Slack parses in a message's text (links, mentions).
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// clip shortens s to at most n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// marshalPlain is json.Marshal without HTML escaping, so & < > stay readable
// (Slack and the dev outbox show them; neither is HTML).
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

package grant

// Syntax is how the patterns of one kind of field read, as the page where an
// owner types a pattern, and docs/owners.md, show it: the rule, and an example
// pattern with values it allows and near misses it refuses (tested to hold).
// Text between backticks is code.
type Syntax struct {
	Kind    Kind
	Rule    string
	Example string
	Allows  []string
	Refuses []string
}

// Syntaxes are the syntax of each kind, in the order docs/owners.md lists them.
var Syntaxes = []Syntax{
	{
		Kind: KindCommand,
		Rule: "`command` is read as a shell command, word by word (spaces outside quotes separate words; `'a b'` is one word). " +
			"`*` matches part or all of one word: never a space outside quotes, a line break, ``; & | < > ` $ ( ) \\``, or part of `..`; outside quotes never `* ? [ ] { } ~ ! #`. " +
			"A word starting with `-`, `:` or `+` (an option, a branch deletion, a forced push; quoted or not) matches only a pattern word starting with that character: write the option to allow it (`git push --force origin *`).",
		Example: "git push origin *",
		Allows:  []string{"git push origin main", "git push origin feature/login-v2", "git push origin 'release 2'"},
		Refuses: []string{
			"git push origin main --force", "git push origin --delete main", "git push origin :main", "git push origin +main",
			"git push origin --receive-pack='touch /tmp/x' main", "git push origin main --exec=/tmp/evil",
			"git push origin main; rm -rf ~", "git push origin $(id)", "git push origin {main,--delete}", "git push upstream main",
		},
	},
	{
		Kind: KindPath,
		Rule: "`file_path`, `notebook_path` and `path` are read as paths, cleaned first (`//`, `/./` and a trailing `/` dropped), and compared name by name. " +
			"`*` matches part or all of one name, never `/`; `**` alone between slashes matches any number of names. " +
			"A path holding `..` never matches, and no wildcard matches a name starting with `.` or `~`: write it (`src/.github/*`). " +
			"An absolute pattern matches absolute paths only.",
		Example: "/srv/app/src/*",
		Allows:  []string{"/srv/app/src/main.go", "/srv/app//src/./main.go"},
		Refuses: []string{
			"/srv/app/src/../.github/workflows/deploy.yml", "/srv/app/src/../../home/alice/.ssh/authorized_keys",
			"/srv/app/src/lib/util.go", "/srv/app/src/.env", "src/main.go",
		},
	},
	{
		Kind:    KindText,
		Rule:    "Any other field is compared as text, whole: `*` matches any run of characters but a line break, ``; & | < > ` $ ( ) \\`` or part of `..`.",
		Example: "https://api.example.com/v1/*",
		Allows:  []string{"https://api.example.com/v1/orders", "https://api.example.com/v1/orders/42"},
		Refuses: []string{"https://api.example.com/v1/../admin", "https://api.example.com/v2/orders"},
	},
}

// SyntaxOf is the syntax of patterns on field.
func SyntaxOf(field string) Syntax {
	kind := KindOf(field)
	for _, s := range Syntaxes {
		if s.Kind == kind {
			return s
		}
	}
	return Syntax{}
}

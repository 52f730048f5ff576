"""Reference bots, the client SDK and the text helpers shared by language-model bots."""

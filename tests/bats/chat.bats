#!/usr/bin/env bats
# chat.bats -- q42run --chat, --system and --chat-template: the prompt
# rendered as llama.cpp renders it (tests/golden/chat/render.jsonl, made
# with llama.cpp's llama_chat_apply_template; the templates themselves
# are checked case by case in tests/unit/test_chat.c), the template read
# from the model's tokenizer.chat_template, and an unknown template a
# warning, or an error under --strict.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	Q42RUN=$(q42_bin q42run)
	GOLD="$Q42_SRCDIR/tests/golden/chat/render.jsonl"
}

# golden TEMPLATE: llama.cpp's rendering of [system "You are brief. ",
# user "  What is 2+2? "] with TEMPLATE, add_ass
golden() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    c = json.loads(l)
    if c["template"] == sys.argv[2] and len(c["messages"]) == 2 and c["add_ass"]:
        sys.stdout.write(c["out"]); break' "$GOLD" "$1"
}

prompt_text() {
	python3 -c 'import json, sys; sys.stdout.write(json.loads(sys.stdin.read())["prompt"]["text"])'
}

@test "--chat: the prompt is llama.cpp's rendering, for named templates" {
	need_model m stories260K.gguf
	for t in chatml llama2-sys llama3 gemma phi3 zephyr mistral-v7; do
		got=$("$Q42RUN" -m "$m" -p "  What is 2+2? " --chat --chat-template "$t" \
			--system "You are brief. " -n 0 --record --record-prompt | prompt_text)
		[ "$got" = "$(golden "$t")" ]
	done
}

@test "--chat: the template of the model's tokenizer.chat_template (tiny phi3)" {
	need_model m tiny-phi3-f32.gguf
	got=$("$Q42RUN" -m "$m" -p "  What is 2+2? " --chat --system "You are brief. " -n 0 \
		--record --record-prompt | prompt_text)
	[ "$got" = "$(golden phi3)" ]
}

@test "--chat: no template is a warning, an error under --strict; options need --chat" {
	need_model m stories260K.gguf
	run "$Q42RUN" -m "$m" -p Hello --chat -n 0 --record --record-prompt
	[ "$status" -eq 0 ]
	[[ $output == *"warning: the model (it names no tokenizer.chat_template)"* ]]
	run "$Q42RUN" -m "$m" -p Hello --chat --strict -n 0
	[ "$status" -eq 2 ]
	run "$Q42RUN" -m "$m" -p Hello --chat --chat-template "{{ nothing }}" --strict -n 0
	[ "$status" -eq 2 ]
	[[ $output == *"--chat-template: no chat template q42 renders"* ]]
	run "$Q42RUN" -m "$m" -p Hello --system x -n 0
	[ "$status" -eq 2 ]
}

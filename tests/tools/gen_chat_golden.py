#!/usr/bin/env python3
"""gen_chat_golden.py -- llama.cpp's renderings of chats for
tests/golden/chat/render.jsonl (see its README): every built-in template
q42 renders, by name and by marker strings of the template texts models
carry in tokenizer.chat_template, over a few chats, through
tests/tools/chat_oracle (llama.cpp's llama_chat_apply_template).

usage: gen_chat_golden.py ORACLE > tests/golden/chat/render.jsonl
"""
import json
import subprocess
import sys

NAMES = ["chatml", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "mistral-v1",
         "mistral-v3", "mistral-v3-tekken", "mistral-v7", "mistral-v7-tekken", "phi3", "phi4",
         "falcon3", "zephyr", "monarch", "gemma", "orion", "openchat", "vicuna", "vicuna-orca",
         "deepseek", "command-r", "llama3", "chatglm3", "chatglm4", "glmedge"]

# template texts (fragments of real ones) and what llama.cpp detects in them
TEXTS = [
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}",
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% endif %}{% endfor %}",
    "{% if messages[0]['role'] == 'system' %}{{ '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' }}{% endif %}[INST]",
    "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}<<SYS>>",
    "{{ bos_token + '[INST] ' + content + ' [/INST]' }}<<SYS>>",
    "[SYSTEM_PROMPT]{{ system }}[/SYSTEM_PROMPT][INST]",
    "{{ bos_token }}{% for message in messages %}[AVAILABLE_TOOLS][INST] {{ message['content'] }}[/INST]{% endfor %}",
    "{%- for m in messages %}{{ '<|' + m['role'] + '|>' + '\\n' + m['content'] + '<|end|>\\n' }}{% endfor %}{{ '<|assistant|>\\n' }}",
    "{% for message in messages %}<|im_start|>{{ message['role'] }}<|im_sep|>{{ message['content'] }}<|im_end|>{% endfor %}",
    "{% for m in messages %}<|{{ m['role'] }}|>\\n{{ m['content'] }}</s><|user|><|assistant|>{% endfor %}",
    "{% for message in messages %}<|{{ message['role'] }}|>\\n{{ message['content'] }}<|endoftext|>\\n<|user|>{% endfor %}",
    "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}",
    "{% for message in messages %}{{ 'GPT4 Correct ' + message['role'] }}{% endfor %}",
    "{% for message in messages %}USER: {{ m }} ASSISTANT: {{ a }}{% endfor %}",
    "SYSTEM: {{ s }} USER: {{ m }} ASSISTANT: {{ a }}",
    "### Instruction:\\n{{ m }}\\n### Response:\\n{{ a }}\\n<|EOT|>",
    "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{{ m }}<|END_OF_TURN_TOKEN|>",
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}{% endfor %}",
    "[gMASK]sop{% for m in messages %}<|{{ m['role'] }}|>\\n {{ m['content'] }}{% endfor %}",
    "[gMASK]<sop>{% for m in messages %}<|{{ m['role'] }}|>\\n{{ m['content'] }}{% endfor %}",
    "{{ bos_token + message['role'] + '\\n' + message['content'] + eos_token }}",
    "{{ 'Human: ' + content + '\\n\\nAssistant: ' + eos_token }}",
    # templates llama.cpp detects as ones q42 does not render, and none
    "<|im_start|>User:<end_of_utterance>",
    "{{ foo }}",
]

CHATS = [
    [{"role": "user", "content": "Hello there"}],
    [{"role": "system", "content": "You are brief. "}, {"role": "user", "content": "  What is 2+2? "}],
    [{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": " Bonjour. "}, {"role": "user", "content": "And now?"}],
]


def main():
    cases = []
    for t in NAMES + TEXTS:
        for i, c in enumerate(CHATS):
            cases.append({"template": t, "messages": c, "add_ass": True})
        cases.append({"template": t, "messages": CHATS[2], "add_ass": False})
    text = "".join(json.dumps(c) + "\n" for c in cases)
    out = subprocess.run([sys.argv[1]], input=text, capture_output=True, text=True, check=True).stdout
    sys.stdout.write(out)


main()

# bash completion for q42run(1)
_q42run()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	-m|--model)
		COMPREPLY=($(compgen -f -X '!*.@(p64|gguf)' -- "$cur") $(compgen -d -- "$cur"))
		return ;;
	-f|--file)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--kv-type)
		COMPREPLY=($(compgen -W 'f32 f16' -- "$cur"))
		return ;;
	--isa)
		COMPREPLY=($(compgen -W 'best scalar avx2 avx512' -- "$cur"))
		return ;;
	-p|--prompt|-n|--max-tokens|--deadline|--stop|-t|--threads|-b|--batch|-c|--ctx|\
	--temp|--top-k|--top-p|--min-p|--repeat-penalty|--repeat-last-n|--seed)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W '--model --prompt --file --max-tokens --deadline --stop
			--threads --batch --ctx --kv-type --isa --temp --top-k --top-p --min-p
			--repeat-penalty --repeat-last-n --seed --no-bos --no-special --tokenize
			--detokenize --lines --record --strict --timings --help --version' -- "$cur"))
	fi
}
complete -F _q42run q42run

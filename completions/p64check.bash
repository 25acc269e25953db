# bash completion for p64check(1) -- validate and inspect P64 and GGUF files.
_p64check()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	--against)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -X '!*.gguf' -- "$cur") $(compgen -d -- "$cur"))
		return
		;;
	--verify)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -X '!*.pem' -- "$cur") $(compgen -d -- "$cur"))
		return
		;;
	--sha256-file)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--sha256|--array|--values|-h|--help|-V|--version)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--against --sha256 --sha256-file --verify --header
			--metadata --array --tensors --tokenizer --tokens --manifold --values
			--json -h --help -V --version" -- "$cur"))
		return
	fi
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -X '!*.@(p64|gguf)' -- "$cur") $(compgen -d -- "$cur"))
}
complete -F _p64check p64check

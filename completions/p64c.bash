# bash completion for p64c(1) -- compile GGUF into P64 and back.
_p64c()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	-o|--output)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--page-log2)
		COMPREPLY=($(compgen -W "12 13 14 15 16 17 18 19 20 21" -- "$cur"))
		return
		;;
	--sign)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -X '!*.pem' -- "$cur") $(compgen -d -- "$cur"))
		return
		;;
	-h|--help|-V|--version)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "-o --output --page-log2 --to-gguf --sign --progress
			--no-progress --json -h --help -V --version" -- "$cur"))
		return
	fi
	compopt -o filenames 2>/dev/null
	local w pattern='!*.gguf'
	for w in "${COMP_WORDS[@]}"; do
		[[ $w == --to-gguf ]] && pattern='!*.p64'
	done
	COMPREPLY=($(compgen -f -X "$pattern" -- "$cur") $(compgen -d -- "$cur"))
}
complete -F _p64c p64c

# bash completion for q42wal(1)
_q42wal() {
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=${COMP_WORDS[1]}
	local cmds="init commit log show verify head prove consistency recover export import pending approve reject bind"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
		return
	fi
	case $prev in
	--sync) COMPREPLY=($(compgen -W "full normal off" -- "$cur")); return ;;
	--batch|--size|--quorum) return ;;
	--review-key|--pub|--key|--sign|--head) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	local opts=
	case $cmd in
	init) opts="--review-key --quorum" ;;
	commit) opts="--sync --batch --review --no-wait" ;;
	log) opts="--json" ;;
	verify) opts="--outputs --head --pub" ;;
	head) opts="--size --sign" ;;
	prove) opts="--size" ;;
	recover) opts="--dry-run --force" ;;
	pending) opts="--all" ;;
	approve|reject) opts="--key --no-wait" ;;
	bind) opts="--sync --no-wait" ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _q42wal q42wal

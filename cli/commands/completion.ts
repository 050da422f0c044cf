// `kubeloop completion bash|zsh`: a completion script for the commands, their actions and the built-in
// function names (cli/command-list.ts); files complete everywhere else.
import { COMMANDS, COMPLETION_SHELLS, commandWords } from '../command-list.ts';
import { usageFailure } from '../command-args.ts';

const USAGE = `usage: kubeloop completion <${COMPLETION_SHELLS.join('|')}>

  bash   source <(kubeloop completion bash)     (or save it under /etc/bash_completion.d/)
  zsh    source <(kubeloop completion zsh)      (uses zsh's bashcompinit)`;

/** The bash completion function; zsh runs the same through bashcompinit. */
export function bashCompletion(): string {
  const cases = Object.keys(COMMANDS)
    .map((command) => [command, commandWords(command)] as const)
    .filter(([, words]) => words.length > 0)
    .map(([command, words]) => `    ${command}) words="${words.join(' ')}" ;;`)
    .join('\n');
  return `# kubeloop shell completion (kubeloop completion bash)
_kubeloop() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${Object.keys(COMMANDS).join(' ')} --help --version" -- "$cur"))
    return
  fi
  if [ "$COMP_CWORD" -eq 2 ]; then
    case "\${COMP_WORDS[1]}" in
${cases}
    esac
  fi
  COMPREPLY=($(compgen -W "$words --help" -- "$cur") $(compgen -f -- "$cur"))
}
complete -o filenames -F _kubeloop kubeloop
`;
}

export async function run(argv: string[]): Promise<number> {
  const [shell, ...extra] = argv;
  if (shell === '--help' || shell === '-h') {
    console.log(USAGE);
    return 0;
  }
  if (!shell || extra.length > 0 || !(COMPLETION_SHELLS as readonly string[]).includes(shell)) {
    return usageFailure('completion', shell ? `"${[shell, ...extra].join(' ')}": want one of ${COMPLETION_SHELLS.join(', ')}` : 'which shell?', USAGE);
  }
  console.log(shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${bashCompletion()}` : bashCompletion());
  return 0;
}

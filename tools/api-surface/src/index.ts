import ts from 'typescript';

/** What a name is: enough to see an accidental export, or a class turned into a function. */
export type ExportKind = 'class' | 'function' | 'const' | 'let' | 'enum' | 'interface' | 'type' | 'namespace';

function kindOf(symbol: ts.Symbol): ExportKind {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Variable) {
    const decl = symbol.valueDeclaration;
    const list = decl?.parent;
    return list !== undefined && ts.isVariableDeclarationList(list) && list.flags & ts.NodeFlags.Const
      ? 'const'
      : 'let';
  }
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  if (f & ts.SymbolFlags.Module) return 'namespace';
  throw new Error(`${symbol.name}: unknown kind (flags ${f})`);
}

/**
 * The names a built entry point (`dist/index.d.ts`) exports, each with its kind, sorted by name.
 * Read from the declarations the package publishes, so type-only exports count too.
 */
export function exportedApi(declarationFile: string): Record<string, ExportKind> {
  const api: Record<string, ExportKind> = {};
  for (const e of exportedSymbols(declarationFile)) api[e.name] = e.kind;
  return api;
}

export interface ExportedSymbol {
  readonly name: string;
  readonly kind: ExportKind;
  /** The first sentence of its doc comment, '' when it has none. */
  readonly summary: string;
}

/** The exports of a built entry point with their kinds and doc summaries, sorted by name. */
export function exportedSymbols(declarationFile: string): ExportedSymbol[] {
  const program = ts.createProgram([declarationFile], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(declarationFile);
  if (source === undefined) throw new Error(`cannot read ${declarationFile}`);
  const module = checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`${declarationFile} is not a module`);
  const symbols = checker.getExportsOfModule(module).sort((a, b) => (a.name < b.name ? -1 : 1));
  return symbols.map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const doc = ts.displayPartsToString(symbol.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim();
    const summary = /^(.*?\.)(\s|$)/.exec(doc)?.[1] ?? doc;
    return { name: exported.name, kind: kindOf(symbol), summary };
  });
}

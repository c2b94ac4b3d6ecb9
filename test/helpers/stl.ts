// Test helper: writes an ASCII STL cube, the smallest real model a slicer accepts.

export function cubeStl(size = 20): string {
  const s = size;
  const v = [[0, 0, 0], [s, 0, 0], [s, s, 0], [0, s, 0], [0, 0, s], [s, 0, s], [s, s, s], [0, s, s]];
  const faces: Array<[number[], number[]]> = [
    [[0, 0, -1], [0, 2, 1]], [[0, 0, -1], [0, 3, 2]], [[0, 0, 1], [4, 5, 6]], [[0, 0, 1], [4, 6, 7]],
    [[0, -1, 0], [0, 1, 5]], [[0, -1, 0], [0, 5, 4]], [[1, 0, 0], [1, 2, 6]], [[1, 0, 0], [1, 6, 5]],
    [[0, 1, 0], [2, 3, 7]], [[0, 1, 0], [2, 7, 6]], [[-1, 0, 0], [3, 0, 4]], [[-1, 0, 0], [3, 4, 7]],
  ];
  let out = 'solid cube\n';
  for (const [n, idx] of faces) {
    out += `facet normal ${n.join(' ')}\n outer loop\n`;
    for (const i of idx) out += `  vertex ${v[i].join(' ')}\n`;
    out += ' endloop\nendfacet\n';
  }
  return out + 'endsolid cube\n';
}

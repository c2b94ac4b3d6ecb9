// File typing: G-code is always known, registered types belong to one server's FileTypes only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FileTypes, isMachineCode, machineCodeTypePath } from '../../src/files/file-types.ts';

test('G-code is known everywhere; a registered model type only where it was registered', () => {
  const withSlicer = new FileTypes();
  const without = new FileTypes();
  withSlicer.register({ typePath: ['model', 'stl'], extensions: ['STL'] });
  withSlicer.register({ typePath: ['model', 'stl'], extensions: ['stl'] });
  assert.deepEqual(withSlicer.typePathOf('benchy.STL'), ['model', 'stl']);
  assert.equal(without.typePathOf('benchy.stl'), undefined);
  for (const types of [withSlicer, without]) {
    assert.deepEqual(types.typePathOf('part.GCO'), ['machinecode', 'gcode']);
    assert.equal(types.typePathOf('notes.txt'), undefined);
    assert.equal(types.typePathOf('.gcode'), undefined, 'a dot file is not a G-code file');
  }
  assert.equal(withSlicer.matchesFilter('benchy.stl', 'model'), true);
  assert.equal(withSlicer.matchesFilter('benchy.stl', 'machinecode'), false);
  assert.equal(withSlicer.matchesFilter('a.g', 'gcode'), true);
  assert.equal(isMachineCode('benchy.stl'), false);
  assert.deepEqual(machineCodeTypePath('x.gcode'), ['machinecode', 'gcode']);
});
